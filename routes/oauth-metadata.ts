// OAuth discovery documents for MCP clients (RFC 9728 protected resource, RFC 8414 server).
import type { FastifyPluginAsync } from 'fastify'
import { AuthorizationServerMetadata, ProtectedResourceMetadata } from '../schemas/oauth.ts'

export const SCOPES = ['growthdesk'] as const

const oauthMetadata: FastifyPluginAsync<{ publicUrl: string }> = async (app, { publicUrl }) => {
  const resource = {
    resource: `${publicUrl}/mcp`,
    authorization_servers: [publicUrl],
    bearer_methods_supported: ['header'],
    // A subset of the authorization server's scopes_supported (the same list).
    scopes_supported: [...SCOPES],
    resource_name: 'growthdesk MCP',
    resource_documentation: `${publicUrl}/SKILL.md`,
  }
  const server = {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/oauth/authorize`,
    token_endpoint: `${publicUrl}/oauth/token`,
    registration_endpoint: `${publicUrl}/oauth/register`,
    revocation_endpoint: `${publicUrl}/oauth/revoke`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    scopes_supported: [...SCOPES],
    // RFC 9207: the authorization response (success and error) carries `iss`.
    authorization_response_iss_parameter_supported: true,
    // An HTTPS URL may be the client_id (Client ID Metadata Documents), beside registration.
    client_id_metadata_document_supported: true,
    service_documentation: `${publicUrl}/SKILL.md`,
  }
  const schema = { tags: ['oauth'], summary: 'OAuth discovery (public)' }
  const resourceSchema = { ...schema, response: { 200: ProtectedResourceMetadata } }
  app.get('/.well-known/oauth-protected-resource/mcp', { schema: resourceSchema }, async () => resource)
  app.get('/.well-known/oauth-protected-resource', { schema: resourceSchema }, async () => resource)
  app.get('/.well-known/oauth-authorization-server', { schema: { ...schema, response: { 200: AuthorizationServerMetadata } } }, async () => server)
}

export default oauthMetadata
