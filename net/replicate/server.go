package replicate

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerPayloadMax is the embedded server's largest message: MessageBytes
// with room for a single large frame (a transaction with megabytes of
// calldata goes alone).
const ServerPayloadMax = 16 << 20

// StartServer starts a NATS server with JetStream in this process,
// storing under dir, listening on host:port (port 0: any free port), for
// tests and `ledgerd --followers` (a production setup runs nats-server, a
// cluster with replicated streams). Shutdown stops it.
func StartServer(dir, host string, port int) (*server.Server, error) {
	if port == 0 {
		port = server.RANDOM_PORT
	}
	s, err := server.NewServer(&server.Options{
		ServerName: "ledgerd-embedded", Host: host, Port: port, JetStream: true, StoreDir: dir,
		MaxPayload: ServerPayloadMax, NoSigs: true, NoLog: true,
	})
	if err != nil {
		return nil, fmt.Errorf("cannot start the embedded NATS server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("the embedded NATS server did not start")
	}
	return s, nil
}
