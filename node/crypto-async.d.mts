// Types for `import … from 'nonceforge/crypto-async'`.
import * as cryptoAsync from './crypto-async.js';
export * from './crypto-async.js';
export default cryptoAsync;
