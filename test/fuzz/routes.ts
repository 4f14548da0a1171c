// The routes the app has, read from the app itself (Fastify's route tree), and the routes
// requests actually reached (Fastify's own match, recorded on every response), so the fuzz
// test can fail when a route exists that nothing fuzzes.
import type { FastifyInstance, HTTPMethods } from 'fastify'

export interface Route {
  method: string
  url: string
}

export const routeKey = (r: Route) => `${r.method} ${r.url}`

/**
 * Every (method, url) of the app, from `printRoutes({ commonPrefix: false })`: each line of the
 * tree is a path piece under its parent's, with the methods in parentheses. find-my-way prints
 * a wildcard child as a bare `*`, dropping the static part between it and its parent (`/docs`
 * → `*` is `/docs/static/*`): the part is found among its siblings' beginnings. Each route read
 * is checked with `hasRoute`, so a misreading fails loudly instead of hiding a route.
 */
export function appRoutes(app: FastifyInstance): Route[] {
  const lines: { depth: number; piece: string; methods: string[] }[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (m) lines.push({ depth: m[1]!.length / 4, piece: m[2]!, methods: m[3]?.split(', ') ?? [] })
  }
  const exists = (method: string, url: string) => app.hasRoute({ method: method as HTTPMethods, url: url === '*' ? '/*' : url })
  const routes: Route[] = []
  const stack: string[] = []
  lines.forEach(({ depth, piece, methods }, i) => {
    const parent = stack[depth - 1] ?? ''
    let url = parent + piece
    if (piece === '*' && depth > 0) {
      const siblings: string[] = []
      for (let j = i - 1; j >= 0 && lines[j]!.depth >= depth; j--) if (lines[j]!.depth === depth) siblings.push(lines[j]!.piece)
      for (let j = i + 1; j < lines.length && lines[j]!.depth >= depth; j++) if (lines[j]!.depth === depth) siblings.push(lines[j]!.piece)
      const starts = new Set(['', '/', ...siblings.flatMap((s) => [...s.matchAll(/\//g)].map((m) => s.slice(0, m.index + 1)))])
      url = [...starts].map((s) => `${parent}${s}*`).find((u) => methods.every((method) => exists(method, u))) ?? url
    }
    stack[depth] = url
    stack.length = depth + 1
    for (const method of methods) {
      if (!exists(method, url)) throw new Error(`read ${method} ${url} from printRoutes, but the app has no such route`)
      routes.push({ method, url })
    }
  })
  return routes
}

/** Records the route (Fastify's matched pattern) of every response from now on. */
export function recordReachedRoutes(app: FastifyInstance): Map<string, Set<number>> {
  const reached = new Map<string, Set<number>>()
  app.addHook('onResponse', async (request, reply) => {
    const url = request.routeOptions.url
    if (url === undefined) return // not found: no route
    const key = `${request.method} ${url}`
    if (!reached.has(key)) reached.set(key, new Set())
    reached.get(key)!.add(reply.statusCode)
  })
  return reached
}
