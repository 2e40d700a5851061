package telemetrytest

import (
	"context"
	"strconv"

	"google.golang.org/grpc/metadata"
)

func formatInt(v int64) string { return strconv.FormatInt(v, 10) }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// metadataFrom returns the gRPC metadata a call came with.
func metadataFrom(ctx context.Context) (metadata.MD, bool) {
	return metadata.FromIncomingContext(ctx)
}
