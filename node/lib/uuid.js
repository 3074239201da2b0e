'use strict';
// Time-prefixed ids: UUIDv7 and tuid6, their compact text, their timestamps.

const binding = require('./binding.js');
const { native } = require('./errors.js');
const { checkBuffer, checkString } = require('./check.js');

function fromCompact(text) {
  checkString(text, 'text');
  return native('text', () => binding.fromCompact(text));
}

function timestampOf(id) {
  checkBuffer(id, 'id');
  return native('id', () => binding.uuidUnixMs(id));
}

module.exports = {
  uuidv7: binding.uuidv7,
  tuid6: binding.tuid6,
  uuidv7Buffer: binding.uuidv7Bytes,
  tuid6Buffer: binding.tuid6Bytes,
  uuidv7Compact: binding.uuidv7Compact,
  tuid6Compact: binding.tuid6Compact,
  fromCompact,
  timestampOf,
};
