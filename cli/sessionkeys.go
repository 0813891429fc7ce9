package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// sessionKeysCmd lists and rotates the keys that sign service sessions
// (docs/architecture.md, "Session signing keys").
func sessionKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session-keys",
		Short: "The keys that sign service sessions for routers: list, rotate",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	list := &cobra.Command{Use: "list", Short: "The current key and the previous one, which still verifies", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			data, _, err := c.do(http.MethodGet, "/session-signing-keys", nil)
			if err != nil {
				return err
			}
			var keys []struct {
				KID         string  `json:"kid"`
				Current     bool    `json:"current"`
				ActivatedAt *string `json:"activatedAt"`
			}
			if err := json.Unmarshal(data, &keys); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KID\tCURRENT\tACTIVATED")
			for _, k := range keys {
				at := "when the cluster was made"
				if k.ActivatedAt != nil {
					at = *k.ActivatedAt
				}
				fmt.Fprintf(tw, "%s\t%v\t%s\n", k.KID, k.Current, at)
			}
			return tw.Flush()
		}}
	rotate := &cobra.Command{Use: "rotate", Short: "Sign new sessions with a new key; end the sessions of the key before the current one", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newClient(cmd)
			if err != nil {
				return err
			}
			data, _, err := c.do(http.MethodPost, "/session-signing-keys/rotate", map[string]any{})
			if err != nil {
				return err
			}
			var out struct {
				KID           string `json:"kid"`
				PreviousKID   string `json:"previousKid"`
				SessionsEnded int    `json:"sessionsEnded"`
			}
			if err := json.Unmarshal(data, &out); err != nil {
				return err
			}
			fmt.Println(out.KID)
			fmt.Fprintf(os.Stderr, "new sessions are signed by %s; %s still verifies the sessions it signed; %d older sessions ended\n",
				out.KID, out.PreviousKID, out.SessionsEnded)
			return nil
		}}
	cmd.AddCommand(list, rotate)
	return cmd
}
