import { describe, expect, it } from 'vitest';
import { AdminClient } from '../../cli/client.js';
import { loadConfig } from '../../runtime/config.js';

/** decisions.md §2: each variable's value is what it says, or the start fails naming it. */
describe('configuration from the environment', () => {
  const load = (env: NodeJS.ProcessEnv) => loadConfig(env, []);

  it('takes TURNOUT_ADMIN_TOKEN without surrounding white space (a secret file ends in a newline), and refuses one that no header could carry', () => {
    expect(load({ TURNOUT_ADMIN_TOKEN: 's3cret-admin-token\n' }).adminToken).toBe('s3cret-admin-token');
    expect(load({ TURNOUT_ADMIN_TOKEN: '  s3cret\r\n' }).adminToken).toBe('s3cret');
    expect(load({ TURNOUT_ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
    expect(load({}).adminToken).toBeUndefined();
    expect(() => load({ TURNOUT_ADMIN_TOKEN: 'two words' })).toThrow(/TURNOUT_ADMIN_TOKEN must not contain white space/);
    expect(() => load({ TURNOUT_ADMIN_TOKEN: ' \n' })).toThrow(/TURNOUT_ADMIN_TOKEN is only white space/);
    // The CLI reads it the same way.
    expect(() => AdminClient.fromEnv({ TURNOUT_URL: 'http://127.0.0.1:1', TURNOUT_ADMIN_TOKEN: 's3cret\n' })).not.toThrow();
  });

  it('reads TURNOUT_WEBHOOK_ALLOW_INSECURE as 1 or 0, and says so of anything else instead of leaving it off', () => {
    expect(load({}).webhook.allowInsecure).toBe(false);
    expect(load({ TURNOUT_WEBHOOK_ALLOW_INSECURE: '1' }).webhook.allowInsecure).toBe(true);
    expect(load({ TURNOUT_WEBHOOK_ALLOW_INSECURE: '0' }).webhook.allowInsecure).toBe(false);
    expect(load({ TURNOUT_WEBHOOK_ALLOW_INSECURE: '' }).webhook.allowInsecure).toBe(false);
    for (const v of ['true', 'yes', 'on', '2']) expect(() => load({ TURNOUT_WEBHOOK_ALLOW_INSECURE: v }), v).toThrow(/TURNOUT_WEBHOOK_ALLOW_INSECURE must be 1 \(on\) or 0 \(off\)/);
  });

  it('holds PORT to a TCP port, naming the variable', () => {
    expect(load({ PORT: '0' }).port).toBe(0);
    expect(load({ PORT: '65535' }).port).toBe(65_535);
    for (const v of ['65536', '70000', '-1', '80.5']) expect(() => load({ PORT: v }), v).toThrow(/PORT must be a whole number from 0 to 65535/);
  });
});
