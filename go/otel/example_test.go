package otel_test

import (
	"context"
	"fmt"

	"github.com/nonceforge/nonceforge/go/nonce"
	nfotel "github.com/nonceforge/nonceforge/go/otel"
	"go.opentelemetry.io/otel/attribute"
	sdk "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A generator's figures on an OpenTelemetry meter (here the SDK's manual
// reader; in a service, the meter provider its exporter serves). A lease's
// figures: nfotel.RegisterLease(meter, l) the same way.
func Example() {
	reader := sdk.NewManualReader()
	meter := sdk.NewMeterProvider(sdk.WithReader(reader)).Meter("billing")

	g, _ := nonce.New(nonce.Options{MachineID: nonce.Machine(7)})
	reg, err := nfotel.RegisterGenerator(meter, g, attribute.String("service", "billing"))
	if err != nil {
		panic(err)
	}
	defer func() { _ = reg.Unregister() }()
	for range 3 {
		_, _ = g.Counter(96)
	}

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "nonceforge_nonces_issued_total" {
			for _, p := range sum.DataPoints {
				if p.Value > 0 {
					fmt.Println(m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
				}
			}
		}
	}
	// Output: nonceforge_nonces_issued_total bits=96,kind=counter,service=billing 3
}
