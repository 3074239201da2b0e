// Types for nonceforge/otel: the fleet's metric series as OpenTelemetry instruments.
// The meter is structurally typed (no dependency on @opentelemetry/api): any object
// with these methods, as @opentelemetry/api's Meter has.

/** One family of the fleet's series (testdata/vectors/metrics.json). */
export interface MetricDef {
  readonly name: string;
  readonly type: 'counter' | 'gauge';
  readonly labels: readonly string[];
  readonly help: string;
}

/** What registerMetrics needs of an OpenTelemetry Meter. */
export interface MeterLike {
  createObservableCounter(name: string, options?: { description?: string }): object;
  createObservableGauge(name: string, options?: { description?: string }): object;
  addBatchObservableCallback(callback: (result: { observe(instrument: object, value: number, attributes?: Record<string, string>): void }) => void, observables: object[]): void;
  removeBatchObservableCallback(callback: (result: { observe(instrument: object, value: number, attributes?: Record<string, string>): void }) => void, observables: object[]): void;
}

/** A source of the fleet's samples: a NonceGenerator. */
export interface MetricsSource {
  metrics(): Array<{ name: string; type: string; labels: Record<string, string>; value: number }>;
}

/**
 * Registers `source`'s figures on `meter` (one observable instrument per family, read when the
 * SDK collects), each series with `options.attributes` beside its labels.
 */
export declare function registerMetrics(meter: MeterLike, source: MetricsSource, options?: { attributes?: Record<string, string> }): { unregister(): void };
/** Every family, in metrics.json's order. */
export declare function metricDefs(): readonly MetricDef[];
