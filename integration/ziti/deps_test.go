package ziti

import (
	_ "edgectl/ctrlchan"
	_ "edgectl/dataplane/wire"

	_ "github.com/openziti/channel/v4"
	_ "github.com/openziti/identity"
	_ "github.com/openziti/transport/v2"
	_ "github.com/openziti/transport/v2/tcp"
	_ "github.com/openziti/ziti/common/pb/ctrl_pb"
	_ "github.com/openziti/ziti/common/pb/edge_ctrl_pb"
	_ "google.golang.org/protobuf/proto"
)
