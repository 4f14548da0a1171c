// What the OAuth endpoints answer (routes/oauth.ts, routes/oauth-metadata.ts): their JSON in
// the order it is written, and OAuth's error object (RFC 6749 §5.2) instead of the API's.
import { Type } from '@sinclair/typebox'

const Url = Type.String({ format: 'uri' })
const Strings = Type.Array(Type.String())

/** RFC 9728: where the MCP endpoint's tokens come from. */
export const ProtectedResourceMetadata = Type.Object({
  resource: Url,
  authorization_servers: Type.Array(Url),
  bearer_methods_supported: Strings,
  scopes_supported: Strings,
  resource_name: Type.String(),
  resource_documentation: Url,
}, { description: 'The protected resource metadata of /mcp (RFC 9728).' })

/** RFC 8414: the authorization server's endpoints and what they support. */
export const AuthorizationServerMetadata = Type.Object({
  issuer: Url,
  authorization_endpoint: Url,
  token_endpoint: Url,
  registration_endpoint: Url,
  revocation_endpoint: Url,
  response_types_supported: Strings,
  grant_types_supported: Strings,
  code_challenge_methods_supported: Strings,
  token_endpoint_auth_methods_supported: Strings,
  revocation_endpoint_auth_methods_supported: Strings,
  scopes_supported: Strings,
  authorization_response_iss_parameter_supported: Type.Boolean(),
  client_id_metadata_document_supported: Type.Boolean(),
  service_documentation: Url,
}, { description: 'The authorization server metadata (RFC 8414).' })

/** RFC 7591 §3.2.1: the registered client. */
export const ClientRegistration = Type.Object({
  client_id: Type.String(),
  client_secret: Type.Optional(Type.String({ description: 'Only for client_secret_post and client_secret_basic clients; shown this once.' })),
  client_secret_expires_at: Type.Optional(Type.Integer({ description: '0: the secret does not expire.' })),
  client_id_issued_at: Type.Integer({ description: 'Seconds since the epoch.' }),
  client_name: Type.String(),
  redirect_uris: Strings,
  grant_types: Strings,
  response_types: Strings,
  token_endpoint_auth_method: Type.String(),
  scope: Type.String(),
}, { description: 'The client, registered.' })

/** RFC 6749 §5.1: an access token and the refresh token that replaces it. */
export const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'A gdo_ key.' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires.' }),
  refresh_token: Type.String({ description: 'Single use: each refresh returns a new one.' }),
  scope: Type.String(),
}, { description: 'An access token and a refresh token.' })

/** RFC 7009 §2.2: revoked, or never valid for this client; the same answer either way. */
export const RevocationResponse = Type.Object({}, { description: 'The token is no longer valid (also when it was unknown).' })

/** RFC 6749 §5.2: the error object every OAuth endpoint answers with. */
export const OAuthError = Type.Object({
  error: Type.String({ description: 'invalid_request, invalid_client, invalid_grant, unsupported_grant_type, invalid_target, invalid_redirect_uri, invalid_client_metadata or slow_down.' }),
  error_description: Type.String(),
})

/** An answer with the OAuth error object, described (the status is its key in `response`). */
export const oauthErrorResponse = (description: string) => ({ description, content: { 'application/json': { schema: OAuthError } } })

/** The OAuth error answers an endpoint taking a form body gives besides its own. */
export const oauthBodyErrors = {
  413: oauthErrorResponse('The body is larger than 1 MiB (invalid_request).'),
  415: oauthErrorResponse('The body is neither form-encoded nor JSON (invalid_request).'),
  429: oauthErrorResponse('Too many requests to this endpoint from this address (slow_down).'),
}
