import { IsString, Length, ValidateBy } from 'class-validator';

function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** `q`: the value to find inside messages, 1 to 256 characters without control characters. */
export function IsMessageSearch(): PropertyDecorator {
  const decorators = [
    IsString({ message: 'q must be a string' }),
    Length(1, 256, { message: 'q must be 1 to 256 characters' }),
    ValidateBy({
      name: 'noControlCharacters',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || !hasControlCharacter(value),
        defaultMessage: () => 'q must not contain control characters',
      },
    }),
  ];
  return (target, propertyKey) => {
    for (const decorator of decorators) decorator(target, propertyKey);
  };
}
