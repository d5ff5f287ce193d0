import { startNotificationSender, transportFor } from '../commands/notifications/sender.js';
import { startDispatcher } from './webhooks.js';
import type { Config } from './config.js';
import type { Runtime } from './wiring.js';

/**
 * Starts the background parts of this process's role besides the API and the projectors
 * (which openRuntime starts): the webhook dispatcher, the notification sender.
 * Each part registers its own stop with runtime.onClose.
 */
export async function startRoles(config: Config, runtime: Runtime): Promise<void> {
  // Background work runs in 'all', or in 'dispatcher' processes in production.
  if (config.role !== 'all' && config.role !== 'dispatcher') return;
  const sender = startNotificationSender(runtime.services, { transport: transportFor(config), from: config.mailFrom });
  runtime.onClose(() => sender.stop());
  // The webhook dispatcher follows the log from its own checkpoint; it registers its stop itself.
  await startDispatcher(config, runtime);
}
