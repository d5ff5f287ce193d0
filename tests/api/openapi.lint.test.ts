import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * The served OpenAPI document is complete (decisions.md 4's headers, an operationId and a summary
 * for each operation, every answer described with its error codes) and Redocly's linter, with its
 * recommended rules, finds nothing in it. The linter runs offline: telemetry and update checks off.
 */
const root = path.resolve(import.meta.dirname, '../..');
let t: TestApp;
let doc: any;
const dir = mkdtempSync(path.join(tmpdir(), 'turnout-openapi-'));

beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const operations = () => Object.entries<any>(doc.paths).flatMap(([url, ops]) => Object.entries<any>(ops).map(([method, op]) => ({ name: `${method.toUpperCase()} ${url}`, op })));

describe('the OpenAPI document', () => {
  it('gives every operation a unique operationId, a summary and a description of each answer', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['listConstituents', 'getConstituent', 'createConstituent', 'updateConstituent', 'listEventTimeZones', 'getVolunteerTaskGroup']));
    for (const { name, op } of operations()) {
      expect(op.summary, name).toBeTruthy();
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        expect(answer.description, `${name} ${status}`).not.toMatch(/Default Response|Every error/);
        if (status === '409') expect(answer.description).toContain('`ambiguous_match`');
        if (status === '400') expect(answer.description).toMatch(/`invalid_field`.*`missing_field`.*`unknown_field`.*`invalid_json`/);
      }
    }
  });

  it('describes the rate-limit headers on every answer after authentication, and Retry-After on 429', () => {
    // Issue 15 adds the Idempotent-Replayed and ETag headers beside these.
    expect(Object.keys(doc.components.headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Policy', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']));
    for (const { name, op } of operations()) {
      expect(op.responses['429'], name).toBeDefined();
      expect(Object.keys(op.responses['429'].headers)).toEqual(expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
      for (const status of Object.keys(op.responses).filter((s) => s !== '401')) expect(Object.keys(op.responses[status].headers ?? {}), `${name} ${status}`).toContain('RateLimit-Remaining');
    }
    expect(doc.servers.length).toBeGreaterThan(0);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('describes Idempotency-Key on every POST and PATCH, with its 409, 422 and replay header (decisions.md §11)', () => {
    const writes = operations().filter(({ name }) => /^(POST|PATCH) /.test(name));
    expect(writes.length).toBeGreaterThan(5);
    for (const { name, op } of writes) {
      expect(op.parameters, name).toContainEqual({ $ref: '#/components/parameters/Idempotency-Key' });
      expect(op.responses['422'].description, name).toContain('idempotency_key_reused');
      expect(op.responses['409'].description, name).toContain('idempotency_key_in_progress');
      expect(Object.keys((op.responses['201'] ?? op.responses['200']).headers), name).toContain('Idempotent-Replayed');
    }
  });

  it('describes ETag, If-Match with 412, and If-None-Match with 304 on the records (decisions.md §11)', () => {
    for (const resource of ['constituents', 'volunteers', 'volunteer-tasks', 'events']) {
      const one = doc.paths[`/api/v1/${resource}/{id}`];
      expect(one.patch.parameters, resource).toContainEqual({ $ref: '#/components/parameters/If-Match' });
      expect(one.patch.responses['412'].description).toContain('precondition_failed');
      expect(Object.keys(one.patch.responses['200'].headers)).toContain('ETag');
      expect(one.get.parameters, resource).toContainEqual({ $ref: '#/components/parameters/If-None-Match' });
      expect(Object.keys(one.get.responses['304'].headers)).toContain('ETag');
      expect(Object.keys(one.get.responses['200'].headers)).toContain('ETag');
      expect(Object.keys(doc.paths[`/api/v1/${resource}`].post.responses['201'].headers)).toContain('ETag');
    }
  });

  it('passes `redocly lint` (recommended rules) with no error and no warning, offline', async () => {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const cli = path.join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const env = { PATH: process.env.PATH, HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const run = promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', path.join(root, 'redocly.yaml'), '--format', 'json'], { cwd: dir, env, maxBuffer: 16 << 20 });
    const { stdout } = await run.catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
    expect(report.problems.map((p: { ruleId: string; message: string; severity: string }) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);
});
