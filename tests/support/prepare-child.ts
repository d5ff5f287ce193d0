/*
 * `turnout rebuild --prepare` on the data dir argv[2] with the projectors of the module argv[3],
 * in a process of its own: a test kills it half-way (tests/runtime/prepare.test.ts).
 */
import { prepareReadModels } from '../../runtime/prepare.js';

const [dir, projectorsModule] = process.argv.slice(2);
await prepareReadModels(dir, { projectorsModule });
process.stdout.write('prepared\n');
