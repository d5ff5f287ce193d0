import { startNotificationSender, transportFor } from '../commands/notifications/sender.js';
import { startDispatcher } from '../dispatcher/start.js';
import type { Config } from './config.js';
import type { Runtime } from './wiring.js';

/**
 * Starts the background parts of this process's role besides the API and the projectors
 * (which openRuntime starts): the webhook dispatcher, the notification sender.
 * Each part registers its own stop with runtime.onClose.
 */
export async function startRoles(config: Config, runtime: Runtime): Promise<void> {
  // Notifications go out from the process that runs the background work ('all', or 'dispatcher' in production).
  if (config.role === 'all' || config.role === 'dispatcher') {
    const sender = startNotificationSender(runtime.services, { transport: transportFor(config), from: config.mailFrom });
    runtime.onClose(() => sender.stop());
  }
  // The webhook dispatcher follows the log from its own checkpoint; it registers its stop itself.
  if (config.role === 'all' || config.role === 'dispatcher') await startDispatcher(config, runtime);
  void config;
  void runtime;
}
