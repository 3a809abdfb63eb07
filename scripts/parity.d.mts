/** The kinds of items the parity check lists, with their headings. */
export declare const KINDS: Readonly<Record<Kind, string>>

export type Kind = "function" | "option" | "query" | "message" | "hook" | "control"

/** A row's status. */
export declare const STATUSES: ReadonlyArray<string>

/** A message type of the official `SDKMessage` union and its `type` / `subtype` literals. */
export interface MessageShape {
  readonly name: string
  readonly type: ReadonlyArray<string>
  readonly subtype: ReadonlyArray<string>
}

/** The official surface declared in an `sdk.d.ts`. */
export type OfficialSurface = { readonly [K in Kind]: ReadonlyArray<string> } & {
  readonly messageShapes: ReadonlyMap<string, MessageShape>
}

/** What this SDK has, read from its sources. */
export interface OurSurface {
  readonly promiseExports: ReadonlySet<string>
  readonly promiseOptions: ReadonlySet<string>
  readonly promiseQuery: ReadonlySet<string>
  readonly rejectedOptions: ReadonlySet<string>
  readonly hookEvents: ReadonlySet<string>
  readonly messageLiterals: ReadonlySet<string>
  readonly srcLiterals: ReadonlySet<string>
}

export interface Row {
  readonly kind: Kind
  readonly name: string
  readonly status: string
  readonly notes: string
  readonly where: string
}

export interface Table {
  readonly rows: ReadonlyMap<string, Row>
  readonly problems: ReadonlyArray<string>
}

export declare const officialSurface: (dts: string) => OfficialSurface
export declare const ourSurface: (src?: string) => OurSurface
export declare const readTable: (file: string) => Table
export declare const check: (input: {
  readonly official: OfficialSurface
  readonly ours: OurSurface
  readonly table: Table
}) => { readonly listing: ReadonlyArray<string>; readonly problems: ReadonlyArray<string> }
