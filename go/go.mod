module github.com/nonceforge/nonceforge/go

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/sony/sonyflake/v2 v2.2.0
	golang.org/x/crypto v0.58.0
	golang.org/x/sys v0.49.0
)
