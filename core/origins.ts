// Which Host and Origin values the service answers and which browser origins may call it
// (DNS-rebinding protection for MCP, CORS): a security policy shared by plugins and routes.

/** The names of this machine, as a URL's hostname spells them. */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '[::1]']

/** Whether a URL's hostname names this machine. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.includes(hostname)
}

function withLoopbackAliases(url: URL): URL[] {
  if (!isLoopbackHost(url.hostname)) return [url]
  return LOOPBACK_HOSTS.map((host) => new URL(`${url.protocol}//${host}${url.port ? `:${url.port}` : ''}`))
}

/** PUBLIC_URL's origin (with its loopback aliases when it is local) and the configured extra origins. */
export function mcpAllowedOrigins(publicUrl: string, extra: string[]): Set<string> {
  return new Set([...withLoopbackAliases(new URL(publicUrl)).map((u) => u.origin), ...extra])
}

/** Host header values: PUBLIC_URL's host, with and without a default port, and loopback aliases. */
export function mcpAllowedHosts(publicUrl: string): Set<string> {
  const hosts = new Set<string>()
  for (const u of withLoopbackAliases(new URL(publicUrl))) {
    hosts.add(u.host.toLowerCase())
    if (!u.port) hosts.add(`${u.hostname}:${u.protocol === 'https:' ? 443 : 80}`.toLowerCase())
  }
  return hosts
}
