import type { SendResult, SenderOptions } from '../dispatcher/send.js';
import type { Signing } from '../dispatcher/sign.js';

/** The sender thread's settings: SenderOptions without a lookup (a function cannot cross threads). */
export type SenderThreadSettings = Omit<SenderOptions, 'lookup'>;

/** Main thread to sender thread: the attempts of one turn (id, url, body, signing), or close. */
export type ToSenderThread = { type: 'send'; attempts: Array<[number, string, string, Signing]> } | { type: 'close' };

/** Sender thread to main thread: ready once loaded, then the outcomes of the attempts that finished in each of its turns. */
export type FromSenderThread = { type: 'ready' } | { type: 'answers'; answers: Array<[number, SendResult]> };
