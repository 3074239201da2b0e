'use strict';
// Errors the way Node's own APIs make them: a TypeError for a wrong type
// (ERR_INVALID_ARG_TYPE) or a bad value (ERR_INVALID_ARG_VALUE), a RangeError
// for a number out of range (ERR_OUT_OF_RANGE), and nonceforge's own codes
// for what is not an argument's fault:
//   ERR_NONCE_REUSE                    a sanitized AEAD refused a repeated nonce
//   ERR_NONCEFORGE_DISABLED            the generator does not issue (disabled, lease lapsed, lost or released)
//   ERR_NONCEFORGE_AUTH                a sealed message did not verify
//   ERR_NONCEFORGE_LEASE_UNREACHABLE   the lease store cannot be reached
//   ERR_NONCEFORGE_LEASE_TIMEOUT       the lease store did not answer in time
//   ERR_NONCEFORGE_LEASE_REFUSED       the store holds what no member trusts (another
//                                      protocol's records, a malformed record, objects of
//                                      another role)
//   ERR_NONCEFORGE_LEASE_ALL_TAKEN     every machine id in the range is held
//   ERR_NONCEFORGE_LEASE_LOST          another holder took the id
//   ERR_NONCEFORGE_CLOCK_BEHIND        the clock is too far behind the previous holder's floor
//   ERR_NONCEFORGE_LEASE               any other store failure
// Messages name the argument and the rule. The crypto-async drop-in keeps the
// original's plain Errors and messages instead (crypto-async.js).
const { inspect } = require('node:util');

function received(value) {
  if (value === null || value === undefined) return ` Received ${value}`;
  if (typeof value === 'function') return ` Received function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    if (value.constructor && value.constructor.name) return ` Received an instance of ${value.constructor.name}`;
    return ` Received ${inspect(value, { depth: -1 })}`;
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return ` Received type ${typeof value} (${shown})`;
}

function withCode(error, code) {
  Object.defineProperty(error, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  return error;
}

/** `The "name" argument must be <expected>. Received …` */
function argType(name, expected, value) {
  return withCode(new TypeError(`The "${name}" argument must be ${expected}.${received(value)}`), 'ERR_INVALID_ARG_TYPE');
}

/** `The argument 'name' <rule>. Received …` */
function argValue(name, rule, value) {
  const shown = value === undefined ? '' : ` Received ${inspect(value, { depth: 0, maxStringLength: 64 })}`;
  return withCode(new TypeError(`The argument '${name}' ${rule}.${shown}`), 'ERR_INVALID_ARG_VALUE');
}

/** `The value of "name" is out of range. It must be <rule>. Received …` */
function outOfRange(name, rule, value) {
  return withCode(
    new RangeError(`The value of "${name}" is out of range. It must be ${rule}. Received ${inspect(value)}`),
    'ERR_OUT_OF_RANGE'
  );
}

function coded(message, code) {
  return withCode(new Error(message), code);
}

// Native errors: the addon puts a Node error code before the message
// ("ERR_…: message") where it knows one; the rest carry napi's status, and
// InvalidArg is a bad value of `argument`.
function fromNative(error, argument) {
  if (!(error instanceof Error)) return error;
  const m = /^(ERR_[A-Z_]+): ([\s\S]*)$/.exec(error.message);
  if (m) {
    if (m[1] === 'ERR_INVALID_ARG_VALUE') return withCode(new TypeError(m[2]), m[1]);
    if (m[1] === 'ERR_OUT_OF_RANGE') return withCode(new RangeError(m[2]), m[1]);
    return coded(m[2], m[1]);
  }
  if (error.code === 'InvalidArg') {
    const name = argument || 'value';
    return argValue(name, `is invalid: ${error.message}`);
  }
  return error;
}

/** Calls `fn`, turning a native error into Node's kind of error for `argument`. */
function native(argument, fn) {
  try {
    return fn();
  } catch (error) {
    throw fromNative(error, argument);
  }
}

module.exports = { argType, argValue, outOfRange, coded, fromNative, native };
