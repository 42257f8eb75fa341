import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { AppValidationPipe } from './app-validation.pipe';

/** Strict input and one error shape for every route (STYLE: "Strict input, one error shape"). */
@Module({
  providers: [
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    {
      provide: APP_PIPE,
      useFactory: () =>
        new AppValidationPipe({
          whitelist: true,
          forbidNonWhitelisted: true,
          transform: true,
          forbidUnknownValues: true,
          stopAtFirstError: false,
        }),
    },
  ],
})
export class CommonModule {}
