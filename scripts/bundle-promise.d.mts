/** Modules left as imports in the bundle (Node built-ins aside). */
export declare const external: ReadonlyArray<string>

/** Bundles `src/promise.ts` into `outfile` (with a linked source map); resolves to esbuild's metafile. */
export declare const bundlePromise: (options: { readonly outfile: string }) => Promise<{
  readonly inputs: Readonly<Record<string, { readonly bytes: number }>>
  readonly outputs: Readonly<
    Record<string, {
      readonly bytes: number
      readonly entryPoint?: string
      readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
    }>
  >
}>
