import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describe } from './api';

/** An API failure in words, announced to screen readers. */
export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {describe(error)}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** Data loaded on mount and whenever deps change; `reload` fetches again. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (error) => !ctl.signal.aborted && setState({ error, loading: false }),
    );
    return () => ctl.abort();
    // `load` is a new closure each render; `deps` say when its inputs changed.
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/**
 * Where focus goes back to after an action (WCAG 2.4.3): the control that started it, which was
 * disabled (and so blurred) while the action ran, once it is enabled again; if the action removed
 * it (a revoked key's button), the heading of its section, so a keyboard or screen-reader user
 * keeps their place instead of starting again from the top of the page.
 */
function refocus(control: HTMLElement | null, section: Element | null): void {
  const lost = () => {
    const active = document.activeElement;
    return !active || active === document.body;
  };
  const toHeading = () => {
    const heading = section?.isConnected ? section.querySelector<HTMLElement>('h2, h3') : null;
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  };
  setTimeout(() => {
    if (!lost()) return; // the action put focus somewhere on purpose
    if (!control?.isConnected || (control as HTMLButtonElement).disabled) return toHeading();
    control.focus();
    // The action may remove its control a moment later (a list reloaded after a revoke).
    if (!section) return;
    const watch = new MutationObserver(() => {
      if (control.isConnected) return;
      watch.disconnect();
      if (lost()) toHeading();
    });
    watch.observe(section, { childList: true, subtree: true });
    setTimeout(() => watch.disconnect(), 5000);
  }, 0);
}

/** A button's or form's work: busy while it runs, its failure kept to be shown, focus kept. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);
  const run = useCallback(async (work: () => Promise<unknown>) => {
    const control = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    const section = control?.closest('section') ?? null;
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      if (alive.current) setError(err);
    } finally {
      if (alive.current) setBusy(false);
      refocus(control, section);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** Submit without a page load (the CSP has form-action 'none'). */
export const onSubmit = (f: () => void) => (e: Event) => {
  e.preventDefault();
  f();
};

export function Pager({ page, canNext, onPage, label }: { page: number; canNext: boolean; onPage: (p: number) => void; label: string }) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span aria-live="polite">Page {page}</span>
      <button type="button" disabled={!canNext} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}
