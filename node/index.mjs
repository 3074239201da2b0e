// ES module entry: the same objects as require('nonceforge').
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const nonceforge = require('./index.js');

export const {
  NonceGenerator,
  LeasePool,
  ExtIdCodec,
  SanitizedAead,
  encrypt,
  decrypt,
  hash,
  hmac,
  createHash,
  Hash,
  uuidv7,
  tuid6,
  uuidv7Buffer,
  tuid6Buffer,
  uuidv7Compact,
  tuid6Compact,
  fromCompact,
  timestampOf,
  cryptoAsync,
} = nonceforge;
export default nonceforge;
