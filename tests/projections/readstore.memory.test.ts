import { MemoryReadStore } from '../support/memory-store/memory.js';
import { readStoreContract } from './readstore.contract.js';

readStoreContract('MemoryReadStore', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});
