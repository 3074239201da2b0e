// make demo's Node part: the npm package's addon (built by npm run build),
// a generator on machine id 7 and an external id, from this checkout.
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const nf = require(path.join(__dirname, '..', 'node', 'index.js'));

const gen = new nf.NonceGenerator({ machineId: 7 });
console.log('counter(96)   ', gen.counter(96).toString('hex'));
console.log('sortable(128) ', gen.sortable(128).toString('hex'));
console.log('uuidv7()      ', nf.uuidv7());
const ids = new nf.ExtIdCodec(randomBytes(32), 'user');
const id = ids.encode(42);
console.log('extid 42      ', id, '->', ids.decodeSeq(id));
