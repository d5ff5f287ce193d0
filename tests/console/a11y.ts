import type { Page } from 'playwright-core';

/** Roles a user operates: each needs an accessible name (decisions.md §13). */
const CONTROLS = new Set(['button', 'link', 'textbox', 'combobox', 'checkbox', 'radio', 'tab', 'spinbutton', 'searchbox', 'slider', 'switch', 'menuitem']);

/** The controls on the page that Chromium's accessibility tree gives no name, as `role (html tag)`. */
export async function unnamedControls(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: Array<{ ignored: boolean; role?: { value: string }; name?: { value: string }; properties?: unknown }> };
    return nodes
      .filter((n) => !n.ignored && CONTROLS.has(n.role?.value ?? '') && !(n.name?.value ?? '').trim())
      .map((n) => n.role!.value);
  } finally {
    await cdp.detach();
  }
}
