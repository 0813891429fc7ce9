package api

// authnRoutes are the operations of auth policies, authenticators, CAs,
// external JWT signers and enrollments.
func (s *Server) authnRoutes() []route {
	return []route{
		// Auth policies
		{managementAPI, get, "/auth-policies", "listAuthPolicies", "Auth Policy", admin, s.listAuthPolicies},
		{managementAPI, post, "/auth-policies", "createAuthPolicy", "Auth Policy", admin, s.createAuthPolicy},
		{managementAPI, get, "/auth-policies/:id", "detailAuthPolicy", "Auth Policy", admin, s.getAuthPolicy},
		{managementAPI, put, "/auth-policies/:id", "updateAuthPolicy", "Auth Policy", admin, s.updateAuthPolicy(modePut)},
		{managementAPI, patch, "/auth-policies/:id", "patchAuthPolicy", "Auth Policy", admin, s.updateAuthPolicy(modePatch)},
		{managementAPI, del, "/auth-policies/:id", "deleteAuthPolicy", "Auth Policy", admin, s.deleteAuthPolicy},

		// Authenticators
		{managementAPI, get, "/authenticators", "listAuthenticators", "Authenticator", admin, s.listAuthenticators},
		{managementAPI, post, "/authenticators", "createAuthenticator", "Authenticator", admin, s.createAuthenticator},
		{managementAPI, get, "/authenticators/:id", "detailAuthenticator", "Authenticator", admin, s.getAuthenticator},
		{managementAPI, put, "/authenticators/:id", "updateAuthenticator", "Authenticator", admin, s.updateAuthenticator(modePut)},
		{managementAPI, patch, "/authenticators/:id", "patchAuthenticator", "Authenticator", admin, s.updateAuthenticator(modePatch)},
		{managementAPI, del, "/authenticators/:id", "deleteAuthenticator", "Authenticator", admin, s.deleteAuthenticator},
		{managementAPI, post, "/authenticators/:id/re-enroll", "reEnrollAuthenticator", "Authenticator", admin, s.reEnrollAuthenticator},
		{managementAPI, post, "/authenticators/:id/request-extend", "requestExtendAuthenticator", "Authenticator", admin, s.requestExtendAuthenticator},

		// Certificate authorities
		{managementAPI, get, "/cas", "listCas", "Certificate Authority", admin, s.listCAs},
		{managementAPI, post, "/cas", "createCa", "Certificate Authority", admin, s.createCA},
		{managementAPI, get, "/cas/:id", "detailCa", "Certificate Authority", admin, s.getCA},
		{managementAPI, put, "/cas/:id", "updateCa", "Certificate Authority", admin, s.updateCA(modePut)},
		{managementAPI, patch, "/cas/:id", "patchCa", "Certificate Authority", admin, s.updateCA(modePatch)},
		{managementAPI, del, "/cas/:id", "deleteCa", "Certificate Authority", admin, s.deleteCA},
		{managementAPI, get, "/cas/:id/jwt", "getCaJwt", "Certificate Authority", admin, s.getCAJWT},
		{managementAPI, post, "/cas/:id/verify", "verifyCa", "Certificate Authority", admin, s.verifyCA},

		// External JWT signers; the Client API list is public so clients can find the IdP before they log in.
		{clientAPI, get, "/external-jwt-signers", "listExternalJwtSigners", "External JWT Signer", public, s.listClientExtJWTSigners},
		{managementAPI, get, "/external-jwt-signers", "listExternalJwtSigners", "External JWT Signer", admin, s.listExtJWTSigners},
		{managementAPI, post, "/external-jwt-signers", "createExternalJwtSigner", "External JWT Signer", admin, s.createExtJWTSigner},
		{managementAPI, get, "/external-jwt-signers/:id", "detailExternalJwtSigner", "External JWT Signer", admin, s.getExtJWTSigner},
		{managementAPI, put, "/external-jwt-signers/:id", "updateExternalJwtSigner", "External JWT Signer", admin, s.updateExtJWTSigner(modePut)},
		{managementAPI, patch, "/external-jwt-signers/:id", "patchExternalJwtSigner", "External JWT Signer", admin, s.updateExtJWTSigner(modePatch)},
		{managementAPI, del, "/external-jwt-signers/:id", "deleteExternalJwtSigner", "External JWT Signer", admin, s.deleteExtJWTSigner},

		// Enrollments
		{managementAPI, get, "/enrollments", "listEnrollments", "Enrollment", admin, s.listEnrollments},
		{managementAPI, post, "/enrollments", "createEnrollment", "Enrollment", admin, s.createEnrollment},
		{managementAPI, get, "/enrollments/:id", "detailEnrollment", "Enrollment", admin, s.getEnrollment},
		{managementAPI, del, "/enrollments/:id", "deleteEnrollment", "Enrollment", admin, s.deleteEnrollment},
		{managementAPI, post, "/enrollments/:id/refresh", "refreshEnrollment", "Enrollment", admin, s.refreshEnrollment},
		{managementAPI, get, "/identities/:id/enrollments", "getIdentityEnrollments", "Identity", admin, s.identityEnrollments},
	}
}
