import type { Config } from './config.js';
import type { Runtime } from './wiring.js';

/**
 * Starts the background parts of this process's role besides the API and the projectors
 * (which openRuntime starts): the webhook dispatcher, the notification sender.
 * Each part registers its own stop with runtime.onClose.
 */
export async function startRoles(config: Config, runtime: Runtime): Promise<void> {
  void config;
  void runtime;
}
