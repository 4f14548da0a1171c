// An MCP client's side of OAuth for tests: an in-memory OAuthClientProvider, and a
// "browser" that signs in to the console and answers the consent page over plain HTTP.
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'

export const REDIRECT = 'http://127.0.0.1:9/callback'

export class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier = ''
  authorizationUrl?: URL

  get redirectUrl() {
    return REDIRECT
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'Test MCP Client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }

  clientInformation() {
    return this.client
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }

  tokens() {
    return this.saved
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }

  codeVerifier() {
    return this.verifier
  }
}

/** A tiny cookie-keeping browser over fetch, following nothing automatically. */
export class Browser {
  private cookies = new Map<string, string>()

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
    let body: string | undefined
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(init.form).toString()
    }
    const res = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' })
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const [k, ...v] = pair!.split('=')
      this.cookies.set(k!.trim(), v.join('='))
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() }
  }
}

export const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? ''

export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[m[1]!] = decode(m[2]!)
  return out
}

const decode = (s: string) =>
  s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'")

/** Signs in at the console (following the login redirect) and allows the consent; returns the redirect. */
export async function consent(base: string, authorizationUrl: string, email: string, password: string, decision: 'allow' | 'deny' = 'allow') {
  const browser = new Browser()
  let res = await browser.request(authorizationUrl)
  if (res.status === 302 && res.location?.startsWith('/console/login')) {
    const login = await browser.request(base + res.location)
    const next = new URL(base + res.location).searchParams.get('next')!
    res = await browser.request(`${base}/console/login`, { method: 'POST', form: { _csrf: csrfOf(login.text), email, password, next } })
    res = await browser.request(base + res.location!)
  }
  if (res.status !== 200) throw new Error(`consent page answered ${res.status}: ${res.text.slice(0, 200)}`)
  const fields = hiddenFields(res.text)
  const answer = await browser.request(`${base}/oauth/authorize`, { method: 'POST', form: { ...fields, decision } })
  return { consentHtml: res.text, status: answer.status, location: answer.location }
}
