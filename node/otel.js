'use strict';
// An OpenTelemetry bridge for nonceforge's figures: see lib/otel.js.
module.exports = require('./lib/otel.js');
