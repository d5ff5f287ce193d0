import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENTION_BUDGET_MS } from '../../commands/aggregate.js';
import { taskStream } from '../../domain/volunteer-task/events.js';
import { WrongExpectedRevision } from '../../eventlog/port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskTeam } from './volunteer-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe("a cascade's write contended past the request's budget (after the review of f30ec84)", () => {
  it('is decided again until it lands: the volunteer DELETE answers 200 and the task is unassigned, never 503 record_busy ("nothing written") after the delete committed', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Val');
    const task = await team.task({ FkVolunteer: v.id });
    expect(task.FkVolunteer).toBe(v.id);
    const log = t.runtime.services.log;
    // Every append to the task loses its race for longer than a request's budget (as 40+ concurrent editors would), then lands.
    const until = Date.now() + CONTENTION_BUDGET_MS + 500;
    let lost = 0;
    t.runtime.services.log = new Proxy(log, {
      get(target, prop) {
        const f = Reflect.get(target, prop);
        if (typeof f !== 'function') return f;
        if (prop !== 'append') return f.bind(target);
        return (stream: string, events: unknown, expected: any, ...rest: unknown[]) => {
          if (stream === taskStream(task.PkTask) && Date.now() < until) {
            lost++;
            return Promise.reject(new WrongExpectedRevision(stream, expected, 99n));
          }
          return (f as any).call(target, stream, events, expected, ...rest);
        };
      },
    });
    let del: any;
    try {
      del = await team.admin.del(`/volunteers/${v.id}`);
    } finally {
      t.runtime.services.log = log;
    }
    expect([del.status, del.body?.error?.code]).toEqual([200, undefined]);
    expect(lost).toBeGreaterThan(10);
    expect((await team.api.get(`/volunteers/${v.id}`)).status).toBe(404);
    // decisions.md 7: a deleted volunteer's tasks become unassigned.
    expect((await team.api.get(`/volunteer-tasks/${task.PkTask}`)).body.volunteerTask.FkVolunteer).toBeNull();
  }, 30_000);
});
