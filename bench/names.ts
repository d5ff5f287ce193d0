/** Realistic-looking people for the benchmarks: common US first and last names, varied emails. */

export const FIRST = `James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan
Joseph Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra Donald
Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy George Melissa
Timothy Deborah Ronald Stephanie Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia Jacob Kathleen Gary Amy Nicholas
Angela Eric Shirley Jonathan Anna Stephen Brenda Larry Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha
Samuel Katherine Gregory Christine Alexander Debra Frank Rachel Patrick Carolyn Raymond Janet Jack Catherine Dennis Maria
Jerry Heather Tyler Diane Aaron Ruth Jose Julie Adam Olivia Nathan Joyce Henry Virginia Douglas Victoria Zachary Kelly
Peter Lauren Kyle Christina Ethan Joan Walter Evelyn Noah Judith Jeremy Megan Christian Andrea Keith Cheryl Roger Hannah
Terry Jacqueline Gerald Martha Harold Gloria Sean Teresa Austin Ann Carl Sara Arthur Madison Lawrence Frances Dylan Kathryn
Jesse Janice Jordan Jean Bryan Abigail Billy Alice Joe Judy Bruce Sophia Gabriel Grace Logan Denise Albert Amber Willie
Doris Alan Marilyn Juan Danielle Wayne Beverly Elijah Isabella Randy Theresa Roy Diana Vincent Natalie Ralph Brittany
Eugene Charlotte Russell Marie Bobby Kayla Mason Alexis Philip Lori`.split(/\s+/);

export const LAST = `Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez
Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson
Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell
Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook
Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez
Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez Powell
Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero Jordan
Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson Ellis Tran
Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells
Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder
Mason Dixon Munoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice
Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn Kelley Spencer Hawkins
Arnold Pierce Vazquez Hansen Peters Santos Hart Bradley Knight Elliott Cunningham Duncan Armstrong Hudson Carroll Lane
Riley Andrews Alvarado Ray Delgado Berry Perkins Hoffman Johnston Matthews Pena Richards Contreras Willis Carpenter
Lawrence Sandoval`.split(/\s+/);

const DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com', 'example.org', 'hotmail.com', 'aol.com', 'proton.me'];
const CITIES: Array<[string, string]> = [['Columbus', 'OH'], ['Austin', 'TX'], ['Denver', 'CO'], ['Portland', 'OR'], ['Raleigh', 'NC'], ['Madison', 'WI']];

/** A deterministic person for index `i` (a small LCG, so runs are comparable). */
export function person(i: number, unique: string = String(i)): Record<string, unknown> {
  const h = (i * 2654435761) >>> 0;
  const first = FIRST[h % FIRST.length];
  const last = LAST[(h >>> 8) % LAST.length];
  const domain = DOMAINS[(h >>> 16) % DOMAINS.length];
  const style = (h >>> 20) % 3;
  const local = style === 0 ? `${first}.${last}` : style === 1 ? `${first[0]}${last}` : `${last}.${first}`;
  const body: Record<string, unknown> = { FirstName: first, LastName: last, Email1: `${local}${unique}@${domain}`.toLowerCase() };
  if (h % 2 === 0) body.Phone1 = `555-${String(100 + (h % 900)).padStart(3, '0')}-${String(h % 10000).padStart(4, '0')}`;
  if (h % 3 === 0) {
    const [city, state] = CITIES[h % CITIES.length];
    Object.assign(body, { MailingAddressLine1: `${(h % 9000) + 100} Main St`, MailingCity: city, MailingState: state, MailingZipCode: String(43000 + (h % 999)) });
  }
  if (h % 5 === 0) body.IsEmailOk = true;
  return body;
}

/** A deterministic sequence in [0, 1), so runs ask the same questions. */
export function random(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Substrings of `length` characters of the names the data was made from (lower case, so they match). */
export function nameTerms(count: number, lengths: number[], rnd: () => number): string[] {
  const names = [...FIRST, ...LAST];
  return Array.from({ length: count }, (_, i) => {
    const name = names[Math.floor(rnd() * names.length)].toLowerCase();
    const len = Math.min(lengths[i % lengths.length], name.length);
    const at = Math.floor(rnd() * (name.length - len + 1));
    return name.slice(at, at + len);
  });
}
