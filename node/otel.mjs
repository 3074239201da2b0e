// ES module entry: the same functions as require('nonceforge/otel').
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const otel = require('./otel.js');

export const { registerMetrics, metricDefs } = otel;
export default otel;
