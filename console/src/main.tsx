import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { whenUnauthorized } from './api';
import { forgetToken, readToken } from './session';
import { Activity } from './views/Activity';
import { ApiKeys } from './views/ApiKeys';
import { ChangeTail } from './views/ChangeTail';
import { EndpointDetail } from './views/EndpointDetail';
import { Erasures } from './views/Erasures';
import { Endpoints } from './views/Endpoints';
import { History } from './views/History';
import { SignIn } from './views/SignIn';
import { Teams, useTeamName } from './views/Teams';

/** The address holds only where you are (#/teams/3/keys), never the token. */
function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const f = () => setHash(location.hash);
    addEventListener('hashchange', f);
    return () => removeEventListener('hashchange', f);
  }, []);
  return hash;
}

const SECTIONS = [
  ['keys', 'API keys'],
  ['endpoints', 'Webhook endpoints'],
  ['activity', 'Activity'],
  ['history', 'History'],
  ['changes', 'Live changes'],
] as const;

function TeamPage({ teamId, section, rest }: { teamId: number; section: string; rest: string[] }) {
  const name = useTeamName(teamId);
  let body;
  if (section === 'endpoints' && rest[0]) body = <EndpointDetail teamId={teamId} endpointId={Number(rest[0])} />;
  else if (section === 'endpoints') body = <Endpoints teamId={teamId} />;
  else if (section === 'activity') body = <Activity teamId={teamId} />;
  else if (section === 'history') body = <History teamId={teamId} />;
  else if (section === 'changes') body = <ChangeTail teamId={teamId} />;
  else body = <ApiKeys teamId={teamId} />;
  return (
    <>
      <nav class="sections" aria-label="Team sections">
        <span class="team-name">{name}</span>
        {SECTIONS.map(([key, label]) => (
          <a href={`#/teams/${teamId}/${key}`} aria-current={key === section || (section === '' && key === 'keys') ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <main>{body}</main>
    </>
  );
}

function App() {
  const [signedIn, setSignedIn] = useState(readToken() !== null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const hash = useHash();
  useEffect(
    () =>
      void whenUnauthorized((message) => {
        setRefusal(message);
        setSignedIn(false);
      }),
    [],
  );
  const signOut = () => {
    forgetToken();
    setSignedIn(false);
  };
  if (!signedIn)
    return (
      <SignIn
        refusal={refusal}
        onSignedIn={() => {
          setRefusal(null);
          setSignedIn(true);
        }}
      />
    );
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const teamId = parts[0] === 'teams' && /^\d+$/.test(parts[1] ?? '') ? Number(parts[1]) : null;
  return (
    <>
      <header class="top">
        <h1>Turnout console</h1>
        <a href="#/">Teams</a>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      {teamId ? <TeamPage teamId={teamId} section={parts[2] ?? ''} rest={parts.slice(3)} /> : <main><Teams /><Erasures /></main>}
    </>
  );
}

render(<App />, document.getElementById('root')!);
