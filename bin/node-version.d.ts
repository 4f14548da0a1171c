// Types for bin/node-version.js, plain JavaScript so that an old Node can read it (see there).
export declare const supportedNodeRange: string
export declare function isSupportedNode(version: string): boolean
export declare function nodeVersionLine(version: string): string
export declare function nodeVersionSupported(): boolean
