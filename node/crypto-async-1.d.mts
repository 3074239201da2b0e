// Types for `import … from 'nonceforge/crypto-async-1'`.
import * as cryptoAsync1 from './crypto-async-1.js';
export * from './crypto-async-1.js';
export default cryptoAsync1;
