package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// Enrollments as OpenZiti's admins make them: for an identity, by method,
// with a duration instead of an RFC 3339 expiry, printing the JWT a user
// enrolls with (or writing it to a file).

// enrollmentFlags are the flags of making or resetting an enrollment.
type enrollmentFlags struct {
	duration time.Duration
	jwtFile  string
	username string
	ca       string
	method   string
}

func (f *enrollmentFlags) add(cmd *cobra.Command, withMethod bool) {
	cmd.Flags().DurationVar(&f.duration, "duration", 24*time.Hour, "how long the enrollment stays valid")
	cmd.Flags().StringVar(&f.jwtFile, "jwt-file", "", "write the enrollment JWT to this file instead of printing it")
	if withMethod {
		cmd.Flags().StringVar(&f.method, "method", "ott", "the method of a new enrollment when the identity has none: ott or updb")
	}
	cmd.Flags().StringVar(&f.username, "username", "", "updb: the username (default: the identity's name)")
	cmd.Flags().StringVar(&f.ca, "ca", "", "ottca: the CA (name or id)")
}

// expiresAt is now plus the duration, as the API takes it.
func (f *enrollmentFlags) expiresAt() (string, error) {
	if f.duration <= 0 {
		return "", usagef("--duration %s: must be positive", f.duration)
	}
	return time.Now().Add(f.duration).UTC().Format(time.RFC3339), nil
}

// createEnrollment makes an enrollment of method for the identity named ref
// and prints its JWT.
func createEnrollment(cmd *cobra.Command, method, ref string, f *enrollmentFlags) error {
	if err := checkEnrollmentMethod(method, f); err != nil {
		return err
	}
	c, id, exp, err := enrollmentTarget(cmd, ref, f)
	if err != nil {
		return err
	}
	return c.createEnrollment(method, id, ref, exp, f)
}

func (c *client) createEnrollment(method, id, ref, exp string, f *enrollmentFlags) error {
	body := map[string]any{"method": method, "identityId": id, "expiresAt": exp}
	if method == "updb" {
		body["username"] = firstNonEmpty(f.username, ref)
	}
	if f.ca != "" {
		cas, err := resourceByName("cas")
		if err != nil {
			return err
		}
		if body["caId"], err = c.resolve(cas, f.ca); err != nil {
			return err
		}
	}
	data, _, err := c.do(http.MethodPost, "/enrollments", body)
	if err != nil {
		return err
	}
	return printEnrollmentJWT(c, createdID(data), f.jwtFile)
}

// checkEnrollmentMethod refuses an unknown method, and ottca without --ca.
func checkEnrollmentMethod(method string, f *enrollmentFlags) error {
	switch method {
	case "ott", "updb", "ottca":
	default:
		return usagef("enrollment method %q: use ott, ottca or updb", method)
	}
	if method == "ottca" && f.ca == "" {
		return usagef("an ottca enrollment needs --ca")
	}
	return nil
}

// enrollmentTarget checks the flags and finds the identity named ref: the
// client, its id, and the expiry the flags give.
func enrollmentTarget(cmd *cobra.Command, ref string, f *enrollmentFlags) (c *client, id, exp string, err error) {
	if exp, err = f.expiresAt(); err != nil {
		return nil, "", "", err
	}
	r, c, err := resourceClient(cmd, "identities", nil)
	if err != nil {
		return nil, "", "", err
	}
	if id, err = c.resolve(r, ref); err != nil {
		return nil, "", "", err
	}
	return c, id, exp, nil
}

// createdID is the id of the record a create answered with.
func createdID(data []byte) string {
	var created struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &created)
	return created.ID
}

// resetEnrollment gives the identity named ref a fresh enrollment: its
// outstanding one refreshed (a new JWT and expiry; the old JWT stops
// working); else, enrolled, its authenticator reverted to an enrollment (it
// must enroll again); else a new one of f.method.
func resetEnrollment(cmd *cobra.Command, ref string, f *enrollmentFlags) error {
	c, id, exp, err := enrollmentTarget(cmd, ref, f)
	if err != nil {
		return err
	}
	data, _, err := c.do(http.MethodGet, "/identities/"+url.PathEscape(id)+"/enrollments", nil)
	if err != nil {
		return err
	}
	var outstanding []struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &outstanding)
	if len(outstanding) > 0 {
		e := outstanding[0].ID
		if _, _, err := c.do(http.MethodPost, "/enrollments/"+url.PathEscape(e)+"/refresh", map[string]any{"expiresAt": exp}); err != nil {
			return err
		}
		return printEnrollmentJWT(c, e, f.jwtFile)
	}
	// Enrolled: its authenticator goes back to an enrollment of its kind
	// (a certificate to ott, or ottca with its CA; a password to updb).
	data, _, err = c.do(http.MethodGet, "/identities/"+url.PathEscape(id)+"/authenticators", nil)
	if err != nil {
		return err
	}
	var auths []struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &auths)
	if len(auths) == 0 {
		if err := checkEnrollmentMethod(f.method, f); err != nil {
			return err
		}
		return c.createEnrollment(f.method, id, ref, exp, f)
	}
	data, _, err = c.do(http.MethodPost, "/authenticators/"+url.PathEscape(auths[0].ID)+"/re-enroll", map[string]any{"expiresAt": exp})
	if err != nil {
		return err
	}
	return printEnrollmentJWT(c, createdID(data), f.jwtFile)
}

// printEnrollmentJWT prints enrollment id's JWT, or writes it to file and
// says where on stderr.
func printEnrollmentJWT(c *client, id, file string) error {
	data, _, err := c.do(http.MethodGet, "/enrollments/"+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	var e struct {
		JWT       string `json:"jwt"`
		ExpiresAt string `json:"expiresAt"`
		Method    string `json:"method"`
	}
	_ = json.Unmarshal(data, &e)
	if file == "" {
		fmt.Println(e.JWT)
	} else if err := os.WriteFile(file, []byte(e.JWT), 0o600); err != nil {
		return fmt.Errorf("--jwt-file: %w", err)
	}
	fmt.Fprintf(os.Stderr, "%s enrollment %s, valid until %s\n", e.Method, id, e.ExpiresAt)
	return nil
}

// createEnrollmentCmd is `create enrollment METHOD IDENTITY`.
func createEnrollmentCmd() *cobra.Command {
	var f enrollmentFlags
	cmd := &cobra.Command{
		Use:     "enrollment METHOD IDENTITY",
		Aliases: []string{"enrollments"},
		Short:   "Make an enrollment (ott, updb or ottca) for an identity and print its JWT",
		Args:    argsWhat{"METHOD": "the method (ott, updb or ottca)", "IDENTITY": "the identity"}.check,
		RunE:    func(cmd *cobra.Command, args []string) error { return createEnrollment(cmd, args[0], args[1], &f) },
	}
	f.add(cmd, false)
	return cmd
}

// resetCmd is `reset enrollment IDENTITY`, the one thing reset resets.
func resetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Give an identity a fresh enrollment (reset enrollment IDENTITY)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var f enrollmentFlags
	enrollment := &cobra.Command{
		Use:     "enrollment IDENTITY",
		Aliases: []string{"enrollments"},
		Short:   "Give an identity a fresh enrollment and print its JWT",
		Long: "Refreshes the identity's outstanding enrollment (a new JWT and expiry: the old JWT stops working); for an\n" +
			"enrolled identity, reverts its authenticator to an enrollment of its kind (the identity must enroll again);\n" +
			"for one with neither, makes an enrollment of --method (default ott). Prints the JWT, or writes it to --jwt-file.",
		Args: argsWhat{"IDENTITY": "the identity"}.check,
		RunE: func(cmd *cobra.Command, args []string) error { return resetEnrollment(cmd, args[0], &f) },
	}
	f.add(enrollment, true)
	cmd.AddCommand(enrollment)
	return cmd
}
