// Finding tools by words: `discover_tools`'s query, and the names an unknown tool's error offers
// instead (the same on REST and MCP: core/operations.ts builds the message).

/** A word in a crude singular, so that 'memory' finds 'memories' and back. */
const singular = (word: string) => (word.length > 3 ? word.replace(/ies$/, 'y').replace(/([^s])s$/, '$1') : word)

/** Lower-case words of a text (names split at `_`), each in the singular. */
export const words = (text: string): string[] => text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).map(singular)

/** Levenshtein distance, for names that are misspelt rather than misnamed. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

interface Candidate { name: string; title: string; description: string }

/** Verbs that say what a tool does, in groups that mean the same to a caller. */
const VERBS = [['get', 'read', 'fetch', 'show', 'view'], ['list', 'find', 'search', 'query'], ['create', 'add', 'new', 'make', 'submit'], ['update', 'set', 'edit', 'change'], ['delete', 'remove', 'forget', 'drop']]
const verbGroup = (word: string) => VERBS.findIndex((group) => group.includes(word))

/**
 * Up to `limit` tool names closest to `wanted`, best first: a name a few edits away (a typo, a
 * plural), then names sharing its nouns (`list_opportunity` → `list_opportunities`), then tools
 * whose title or description holds them (`get_metrics` → the tools about daily metrics). A verb
 * (`get`, `delete` or a synonym such as `forget`) only helps a name that shares something else.
 * Ties keep the catalogue's order. Nothing close: an empty list.
 */
export function closestToolNames(wanted: string, tools: readonly Candidate[], limit = 3): string[] {
  const query = words(wanted)
  // A name that is all verbs (`search`) is searched for as it is.
  const nouns = query.some((w) => verbGroup(w) === -1) ? query.filter((w) => verbGroup(w) === -1) : query
  const verbs = query.map(verbGroup).filter((g) => g !== -1)
  const scored = tools.map((tool, index) => {
    const nameWords = words(tool.name)
    const textWords = new Set(words(`${tool.title} ${tool.description}`))
    const edits = distance(wanted.toLowerCase(), tool.name)
    let score = edits <= Math.max(2, Math.floor(tool.name.length / 4)) ? 10 - edits : 0
    for (const w of nouns) {
      if (nameWords.includes(w)) score += 3
      else if (w.length >= 4 && nameWords.some((n) => n.length >= 4 && (n.startsWith(w) || w.startsWith(n)))) score += 2
      else if (w.length >= 3 && textWords.has(w)) score += 1
    }
    if (score > 0 && nameWords.some((n) => verbs.includes(verbGroup(n)))) score += 1
    return { name: tool.name, score, index }
  })
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.index - b.index).slice(0, limit).map((s) => s.name)
}

/** The sentence an unknown tool's error ends with: the closest names, and where to look further. */
export function unknownToolHint(wanted: string, tools: readonly Candidate[]): string {
  const closest = closestToolNames(wanted, tools)
  return `${closest.length > 0 ? `Closest: ${closest.join(', ')}. ` : ''}Call discover_tools (optionally with a query) to find the tool for a task.`
}
