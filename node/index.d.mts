// Types for `import … from 'nonceforge'`.
import * as nonceforge from './index.js';
export * from './index.js';
export default nonceforge;
