'use strict';
// Argument checks shared by every job: each throws Node's error for the rule it names.

const { argType, outOfRange } = require('./errors.js');

function checkBuffer(value, name) {
  if (!ArrayBuffer.isView(value)) throw argType(name, 'an instance of Buffer, TypedArray, or DataView', value);
}

function checkString(value, name) {
  if (typeof value !== 'string') throw argType(name, 'of type string', value);
}

function checkOptions(value, name) {
  if (value === null || typeof value !== 'object') throw argType(name, 'of type object', value);
}

function checkInteger(value, name, min, max) {
  if (typeof value !== 'number') throw argType(name, 'of type number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw outOfRange(name, `an integer >= ${min} and <= ${max}`, value);
  }
}

function checkKey(key, name) {
  checkBuffer(key, name);
  if (key.byteLength < 32) throw outOfRange(`${name}.byteLength`, '>= 32', key.byteLength);
}
function checkSeq(value, name) {
  if (typeof value === 'bigint') {
    if (value < 0n || value >= 2n ** 64n) throw outOfRange(name, '>= 0n and < 2n ** 64n', value);
  } else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw outOfRange(name, 'a safe integer >= 0 (or a bigint)', value);
  } else {
    throw argType(name, 'of type number or bigint', value);
  }
}


module.exports = { checkBuffer, checkString, checkOptions, checkInteger, checkKey, checkSeq };
