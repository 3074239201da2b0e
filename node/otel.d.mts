// Types for `import … from 'nonceforge/otel'`.
import * as otel from './otel.js';
export * from './otel.js';
export default otel;
