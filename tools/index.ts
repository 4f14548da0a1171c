// Every operation of the registry. A new tool is one file in this folder and one line here.
import type { Operation } from '../core/operations.ts'

export const operations: Operation[] = []
