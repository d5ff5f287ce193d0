/** The package's public surface: build the app, and verify webhook signatures as a subscriber. */
export { buildApp } from './app.js';
export { loadConfig } from '../runtime/config.js';
export { openRuntime } from '../runtime/wiring.js';
