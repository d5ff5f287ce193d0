// Given to a server process as `--import` (tests/production/start-cost.test.ts): registers
// hooks.mjs, which tells on stderr each npm package the process (any of its threads) imports.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
