/**
 * decisions.md §13: the admin token lives only in this tab's session storage: never in local
 * storage, a cookie or the address, so closing the tab forgets it.
 */
const KEY = 'turnout.adminToken';

export const readToken = (): string | null => sessionStorage.getItem(KEY);
export const saveToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const forgetToken = (): void => sessionStorage.removeItem(KEY);
