import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, onSubmit, useAction, useLoad } from '../ui';

interface Team {
  id: number;
  name: string;
  alertEmail?: string | null;
  createdAt: string;
}

/** Names of the teams seen this session, for the team pages' heading. */
const names = new Map<number, string>();
const teamName = (id: number) => names.get(id) ?? `Team ${id}`;

/**
 * The team's name for its pages: known if the picker was shown this session, else asked for once
 * (a page opened from a bookmark or reloaded). Until then, and if the call fails (the page's own
 * calls then say why), "Team <id>".
 */
export function useTeamName(id: number): string {
  const [, setLearned] = useState(0);
  useEffect(() => {
    if (names.has(id)) return;
    let live = true;
    call<{ teams: Team[] }>('GET', '/teams').then(
      (r) => {
        for (const t of r.teams) names.set(t.id, t.name);
        if (live) setLearned((n) => n + 1);
      },
      () => undefined,
    );
    return () => void (live = false);
  }, [id]);
  return teamName(id);
}

const open = (id: number) => (location.hash = `#/teams/${id}/keys`);

export function Teams() {
  const teams = useLoad(() => call<{ teams: Team[] }>('GET', '/teams'), []);
  const [name, setName] = useState('');
  const [alertEmail, setAlertEmail] = useState('');
  const create = useAction();
  const list = [...(teams.data?.teams ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  for (const t of list) names.set(t.id, t.name);
  return (
    <>
      <section aria-labelledby="pick-team">
        <h2 id="pick-team">Pick a team</h2>
        <ErrorText error={teams.error} />
        {teams.loading && !teams.data ? <p>Loading teams…</p> : null}
        {teams.data && list.length === 0 ? <p>No teams yet: create the first one below.</p> : null}
        <ul class="teams">
          {list.map((t) => (
            <li>
              <a href={`#/teams/${t.id}/keys`}>{t.name}</a> <span class="muted">#{t.id}</span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="create-team">
        <h2 id="create-team">Create a team</h2>
        <form
          onSubmit={onSubmit(() =>
            create.run(async () => {
              const body: Record<string, string> = { name };
              if (alertEmail) body.alertEmail = alertEmail;
              const { team } = await call<{ team: Team }>('POST', '/teams', { body });
              names.set(team.id, team.name);
              open(team.id);
            }),
          )}
        >
          <label>
            Team name
            <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Alert email (optional)
            <input type="email" value={alertEmail} onInput={(e) => setAlertEmail(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={create.busy}>
            Create team
          </button>
        </form>
        <ErrorText error={create.error} />
      </section>
    </>
  );
}
