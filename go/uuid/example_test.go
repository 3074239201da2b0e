package uuid_test

import (
	"fmt"
	"time"

	"github.com/nonceforge/nonceforge/go/uuid"
)

func ExampleNewV7() {
	a, b := uuid.NewV7(), uuid.NewV7()
	fmt.Println(a.Version(), a.String() < b.String())
	// Output: 7 true
}

func ExampleFromCompact() {
	id, _ := uuid.FromCompact("AYOFdhN7r5ymN75rjTKvbg") // pg_tuid's documented tuid6
	fmt.Println(id)
	fmt.Println(time.UnixMilli(id.UnixMilli()).UTC().Format(time.RFC3339Nano))
	// Output:
	// 01838576-137b-af9c-a637-be6b8d32af6e
	// 2022-09-28T18:57:31.515Z
}

func ExampleUUID_Time() {
	v1, _ := uuid.Parse("c232ab00-9414-11ec-b3c8-9f6bdeced846") // RFC 9562 A.1
	t, ok := v1.Time()
	fmt.Println(t, ok)
	// Output: 2022-02-22 19:22:22 +0000 UTC true
}
