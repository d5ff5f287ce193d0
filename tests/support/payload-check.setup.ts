import { afterEach } from 'vitest';
import { checkEnvelopesWith } from '../../dispatcher/envelope.js';

/**
 * Every test file runs with this (vitest.config.ts setupFiles): each envelope the code under test
 * builds is checked against its type's published schema. A mismatch throws where the envelope is
 * built, and fails the test that produced it even where the throw is caught (the dispatcher
 * retries and reports failures rather than crash).
 */
const mismatches: string[] = [];

checkEnvelopesWith(async (envelope) => {
  // Loaded with the first envelope: most test files build none, and need not load the schemas.
  const { payloadErrors } = await import('./payload-schemas.js');
  const errors = payloadErrors(envelope.type, envelope.data);
  if (!errors.length) return;
  const message = `${envelope.type} payload ${envelope.id} does not match its schema: ${errors.join('; ')}`;
  mismatches.push(message);
  throw new Error(message);
});

afterEach(() => {
  if (mismatches.length) throw new Error(mismatches.splice(0).join('\n'));
});
