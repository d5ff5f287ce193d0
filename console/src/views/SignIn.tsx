import { useState } from 'preact/hooks';
import { saveToken } from '../session';
import { onSubmit } from '../ui';

/** The admin token is checked by the first call the next page makes; a refusal comes back here. */
export function SignIn({ onSignedIn, refusal }: { onSignedIn: () => void; refusal: string | null }) {
  const [token, setToken] = useState('');
  return (
    <main class="signin">
      <h1>Turnout console</h1>
      {refusal && (
        <p class="error" role="alert">
          {refusal}
        </p>
      )}
      <form
        onSubmit={onSubmit(() => {
          saveToken(token.trim());
          onSignedIn();
        })}
      >
        <label>
          Admin token
          <input type="password" name="token" autocomplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">The token is kept only in this tab and forgotten when you sign out or close it.</p>
    </main>
  );
}
