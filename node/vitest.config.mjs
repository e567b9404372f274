//! vitest for the checkpointer validation suite (`test/validation.spec.mjs`): its specs use the
//! global `describe`, `it` and `expect`, as under Jest.

export default {
  test: {
    globals: true,
    include: ["test/validation.spec.mjs"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
};
