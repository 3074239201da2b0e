// ES module entry: the same objects as require('nonceforge/crypto-async-1').
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cryptoAsync1 = require('./crypto-async-1.js');

export const { cipher, hash, hmac } = cryptoAsync1;
export default cryptoAsync1;
