/**
 * What `turnout import --resource` takes: the batch routes' resources (decisions.md §14). Apart
 * from the rows' validation (validate.ts, which loads the API's schemas and their validator) so
 * that every other command, and `--help`, starts without loading them.
 */
export const RESOURCES = ['constituents', 'volunteers', 'volunteer-tasks', 'events'] as const;
export type Resource = (typeof RESOURCES)[number];
