/**
 * The projectors that read a stream's category (`constituent` of `constituent-12`), in the order
 * given, worked out once per category: every event goes only to the projectors that read it.
 */
export function categoryRouter<P extends { categories?: readonly string[] }>(projectors: readonly P[]): (stream: string) => P[] {
  const routes = new Map<string, P[]>();
  return (stream) => {
    const dash = stream.indexOf('-');
    const category = dash < 0 ? stream : stream.slice(0, dash);
    let ps = routes.get(category);
    if (!ps) routes.set(category, (ps = projectors.filter((p) => !p.categories || p.categories.includes(category))));
    return ps;
  };
}
